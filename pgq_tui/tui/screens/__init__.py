"""Modal screens: job detail, help, confirmation."""
