"""optsched.core.units: unit conversions and slots."""

from __future__ import annotations

import pytest

from optsched.core.units import to_slots
from optsched.exceptions import InvalidInstanceError


def test_to_slots():
    assert to_slots(6.0, 2.0) == 3
    with pytest.raises(InvalidInstanceError, match="whole number of slots"):
        to_slots(5.0, 2.0)
    assert to_slots(5.0, 2.0, exact=False) == 3
