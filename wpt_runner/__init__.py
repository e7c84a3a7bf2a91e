"""Run the WPT ``webnn/`` testharness.js tests in headless Chromium against
the WebNN polyfill.  See ``python -m wpt_runner --help``."""
