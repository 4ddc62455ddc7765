from .onnx_import import ImportContext, import_model, read_onnx

__all__ = ["ImportContext", "import_model", "read_onnx"]
