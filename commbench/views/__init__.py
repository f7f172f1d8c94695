"""Views: every output is a view of the Measurement records."""
