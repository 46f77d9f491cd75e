// TEMPORARY scaffolding: the owner of each seam deletes its stub here when adding the real file.
#include "sys/http.h"

namespace gp::sys {

std::unique_ptr<HttpClient> MakeCurlHttpClient() { return nullptr; }

}  // namespace gp::sys
