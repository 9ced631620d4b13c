"""How humans judge: campaigns, items, assignments and labels arrive with the annotation-studio
issue (#5). annotation may import evaluation and benchmarks, never the other way."""
