// Placeholder translation unit so the interp layer library has a source; replaced as the layer grows.
