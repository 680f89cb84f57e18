"""`python -m memex.committee.server [--port 7861] [--sealed]`: serve the committee."""

from memex.committee.server.app import main

main()
