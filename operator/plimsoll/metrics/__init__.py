"""Reading what the target, the mock and the generators used over a trial window.

`source` holds the interface the runner calls; `cgroup`, `proc` and `sampler` read
local processes; `exporter` republishes those figures under cAdvisor's names so a
real Prometheus can scrape them; `prometheus` and `promql` read any cluster's.
"""
