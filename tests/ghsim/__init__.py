"""Tests of the GitHub simulator, driven with PyGithub over loopback HTTP."""
