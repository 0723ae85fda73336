// The project's single pair of error-propagation macros over absl::Status.
// RETURN_IF_ERROR(expr) returns a non-OK Status from the enclosing function;
// ASSIGN_OR_RETURN(lhs, expr) unwraps an absl::StatusOr or returns its error.
#ifndef BASE_STATUS_MACROS_H_
#define BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define ET_STATUS_CONCAT_INNER_(a, b) a##b
#define ET_STATUS_CONCAT_(a, b) ET_STATUS_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                \
  do {                                       \
    ::absl::Status et_status_ = (expr);      \
    if (!et_status_.ok()) return et_status_; \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, expr)                                         \
  ET_ASSIGN_OR_RETURN_IMPL_(ET_STATUS_CONCAT_(et_statusor_, __LINE__), lhs, \
                            expr)

#define ET_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                              \
  if (!statusor.ok()) return statusor.status();        \
  lhs = std::move(statusor).value()

#endif  // BASE_STATUS_MACROS_H_
