"""The report's figures as PNG bytes (matplotlib, Agg backend, no display needed).

    data     what the figures draw, as plain arrays: small, picklable, light to import
    layout   where a figure's axes, title and legends go, computed before it is drawn
    charts   the charts of report.html: fan charts, exceedance, completion, power
    costs    the Pareto chart of the cost section
    paths    whole scenarios replayed, the paths the fan charts draw over their bands
    worker   the figures drawn in a second process while the run simulates and writes
"""
