// Placeholder translation unit so the pipeline layer library has a source; replaced as the layer grows.
