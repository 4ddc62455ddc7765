from .onnx_import import ImportContext, import_model, load_onnx

__all__ = ["ImportContext", "import_model", "load_onnx"]
