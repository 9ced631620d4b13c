"""How machines judge: endpoints, runs, predictions and judges arrive with the machine-evaluation
issue (#3). The app exists now so that the direction of dependence is fixed from the start:
evaluation may import benchmarks, never the other way."""
