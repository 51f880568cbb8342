"""Look at a solution: Gantt charts and GPU usage of a :class:`~optsched.core.Schedule` (matplotlib).

* :func:`plot_schedule` - Gantt chart, one band per server and one row per GPU;
* :func:`plot_usage` - GPUs in use per server over time (a step function), with capacities;
* :func:`usage_steps` - the numbers behind :func:`plot_usage`;
* :func:`save_figure` - a figure as PNG and SVG files, each written atomically;
* :mod:`optsched.plot.style` - one text size for every figure, and the size a figure's smallest
  text shows at once a page scales the picture to its column (at least 9 pt).

A shared layer (builds on ``optsched.core`` only); matplotlib is imported when a figure is drawn.
"""

from optsched.plot.files import save_figure
from optsched.plot.gantt import plot_schedule
from optsched.plot.occupancy import usage_steps
from optsched.plot.usage import plot_usage

__all__ = ["plot_schedule", "plot_usage", "usage_steps", "save_figure"]
