"""Helpers shared by the test modules (records, runners, accounts, strategies).

Test modules import shared code from here, never from one another or from a conftest.py; fixtures stay
in the conftest.py of the level that needs them.
"""
