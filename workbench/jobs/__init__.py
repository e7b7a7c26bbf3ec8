"""Background work: job records and kinds, split jobs, writing in turn, the busy-database page."""
