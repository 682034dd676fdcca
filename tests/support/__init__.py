"""Helpers the tests of more than one part use: exact comparison (`exact`) and the codec's
values (`values`)."""
