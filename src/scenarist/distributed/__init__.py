"""Running a suite on a Ray cluster (the ``ray`` extra, loaded only when asked for):
``RayExecutor`` and the batching of scenarios into Ray tasks."""
