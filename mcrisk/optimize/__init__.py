"""`mcrisk optimize`: search sequencing plans on the same sampled worlds (issue 14).

space.py reads the search space (a TOML file beside the scenario), candidates.py turns it into
candidate plans (strategies plus a crew count) and rejects the infeasible ones before any
simulation; objective.py, race.py and evaluate.py score and race them; mcrisk.optimize_run
ties the phases together for the command line.
"""
