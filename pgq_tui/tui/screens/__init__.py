"""Modal screens: job detail, help, confirmation."""

from textual.binding import Binding

# `q` quits from every screen, as in htop and k9s; escape closes the screen.
QUIT = Binding("q", "app.quit", "Quit")
