"""Reporting: the report JSON, the Markdown PR comment and JUnit XML, all from the same report dict."""
