"""Design-space sweeps and regressions: many builds as tasks on a dask.distributed cluster.

`grid` expands the axes (targets x bits x batch x verify x synth) into configurations, `task` is what a
worker runs for one of them (a build in a private folder; every failure becomes a row), `cache` names a
task by its content so a rerun only computes what changed, `runner` sends the tasks to a cluster (a
LocalCluster by default) and persists each row as it arrives, and `table` / `page` turn the rows into
results.csv/.parquet, index.html and a JUnit XML. dask loads only in `runner`.
"""
