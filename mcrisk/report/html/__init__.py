"""report.html: one self-contained page (inline CSS, figures as inline SVG (the nightly trend as base64 PNG), no scripts).

    page         the whole page, section by section (render_report)
    parts        small pieces every section uses: a strategy's swatch, a number's cell
    tables       the result tables: the ranking, each strategy against the leader, costs
    figures      the figures with their captions
    gantt        the probabilistic Gantt chart per strategy, as inline SVG
    costs        the cost section: cost beside trough, the Pareto frontier
    contingent   contingent strategies: branches taken, the value of flexibility
    nightly      the nightly's parts: alerts, night over night, the trend
    definitions  "Definitions and assumptions" and the provenance
    optimize     report.html of an `mcrisk optimize` run
    optimize_words  the words of an optimize run that the page and the terminal share
"""
