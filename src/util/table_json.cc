// The head of a table's JSON object (status reply and reports).
#include "util/table_json.h"

namespace mtier::json {

Writer& begin_table(Writer& j, const TableHead& t) {
  j.begin_object();
  if (t.pid >= 0) j.integer("pid", t.pid);
  return j.uint("id", t.id).str("name", std::string(t.name)).uint("bytes", t.bytes);
}

}  // namespace mtier::json
