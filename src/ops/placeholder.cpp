// Placeholder translation unit so the ops layer library has a source; replaced as the layer grows.
