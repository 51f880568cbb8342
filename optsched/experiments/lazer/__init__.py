"""Lazer's study: the policies on the traces it uses (:mod:`.study`) and those workloads
(:mod:`.workloads`)."""
