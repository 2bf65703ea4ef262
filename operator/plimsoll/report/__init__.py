"""The report: report.json (the `RunReport` model), report.md (jinja2) and charts.

`plimsoll run` writes all three at the end of a run (report.json also after
every step); `plimsoll report FILE` renders the last two again from a
report.json.
"""
