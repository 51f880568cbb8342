"""Free GPUs and other resources, at the path code imports them from: the module is
:mod:`optsched.sim.model.resources`."""

from optsched.sim.model.resources import FreeGPUs, FreeResources, WholeNodeGPUs, ids_of

__all__ = ["FreeGPUs", "FreeResources", "WholeNodeGPUs", "ids_of"]
