"""The errors the API raises, named after the JS exceptions they become.

The JS shim maps `js_name` onto `TypeError` or a `DOMException` of that name, so
Python code raises exactly what the spec says and the bridge needs no tables.
"""


class WebNNError(Exception):
    js_name = "Error"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class WebNNTypeError(WebNNError):
    js_name = "TypeError"


class DataError(WebNNError):
    js_name = "DataError"


class InvalidStateError(WebNNError):
    js_name = "InvalidStateError"


class OperationError(WebNNError):
    js_name = "OperationError"


class NotSupportedError(WebNNError):
    js_name = "NotSupportedError"


class UnknownError(WebNNError):
    js_name = "UnknownError"


class Invalid(Exception):
    """Raised by op validation; the builder turns it into a labelled TypeError."""
