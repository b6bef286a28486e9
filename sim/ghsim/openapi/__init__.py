"""The vendored subset of GitHub's OpenAPI description and the script that regenerates it."""
