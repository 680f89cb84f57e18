"""`python -m memex.adversary.server [--port 7862]`: serve the launderer adversary."""

from memex.adversary.server.app import main

main()
