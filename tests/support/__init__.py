"""Test support: real servers on loopback that tests and container checks talk to."""
