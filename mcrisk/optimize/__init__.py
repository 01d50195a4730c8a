"""`mcrisk optimize`: search sequencing plans on the same sampled worlds.

    space       the search file: the template strategy, its knobs, objective and constraints
    order       the order of waves, a knob of its own
    threshold   a contingent template's decision threshold (its day, its count), a knob of
                its own
    candidates  the knobs' plans as strategies (plus a crew count), the infeasible rejected
                before any simulation
    objective   the statistics a race decides on: objective, constraints, paired tests
    race        successive halving of the candidates on growing numbers of scenarios
    evaluate    the survivors on fresh scenarios, against the template
    run         one optimize run end to end, for the CLI (optimize.json, strategies.toml,
                report.html)
"""
