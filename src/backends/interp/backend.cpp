// The interpreter backend's registration with the pipeline (being moved here from src/pipeline).
extern "C" {
extern const int evoxc_backend_interp_anchor;
const int evoxc_backend_interp_anchor = 1;
}
