"""amber bench, its studies and reports, and the amber command line."""
