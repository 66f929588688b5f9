// Query helpers the SqliteStore's source files share. Private to db/.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "db/sqlite_connection.h"
#include "db/store.h"

namespace tilesmith::db {

/// Conditions for the set fields of a filter, as `column = ?` joined by AND, with the values
/// to bind in order.
struct Conditions {
  std::string sql;
  std::vector<std::string> values;
};

/// `prefix` qualifies the columns ("m.").
Conditions FilterConditions(const ResultFilter& filter, std::string_view prefix);
void BindValues(sqlite::Statement& statement, const std::vector<std::string>& values,
                int first = 1);
/// A JSON column read back; a corrupt one is an error naming the column.
Expected<nlohmann::json> ParseStoredJson(const std::string& text, std::string_view column);

}  // namespace tilesmith::db
