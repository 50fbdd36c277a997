// Placeholder translation unit so the trace layer library has a source; replaced as the layer grows.
