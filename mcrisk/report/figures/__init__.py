"""The report's figures as inline SVG, built as text (no plotting library, milliseconds).

    data     what the figures draw, as plain arrays: small and light to import
    svg      the drawing primitives: canvas, panels with ticks and labels, legends, text widths
    charts   the charts of report.html: fan charts, exceedance, completion, power
    costs    the Pareto chart of the cost section
    paths    whole scenarios replayed, the paths the fan charts draw over their bands
    layout   room for a matplotlib figure's texts, computed before it is drawn: the nightly
             trend chart's (report/nightly/trend.py), the one figure still drawn as a PNG
"""
