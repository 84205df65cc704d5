"""The data a run produces and stores: the trace, paths into it, results and statuses,
usage and cost, statistics, run comparison, stored records (traces, scenario items,
snapshots). The bottom layer: it imports nothing of scenarist but ``errors`` and the
shared leaves at the top of the package."""
