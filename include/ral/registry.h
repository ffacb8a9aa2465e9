// The process-wide table of RAL functions, filled by RAL_API registrations (see ral/api.h).
#ifndef RAL_REGISTRY_H_
#define RAL_REGISTRY_H_

#include <cstddef>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ral/abi.h"
#include "ral/context_type.h"
#include "ral/status.h"

namespace ral {

struct ApiRegistration {
  std::string name;                           // full encoded name
  ral_fn fn = nullptr;                        // type-erased wrapper
  const ContextType* context_type = nullptr;  // the context type it was written for
  std::string location;                       // "file.cc:42", for error messages
};

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The registry RAL_API writes to.
  static Registry& global();

  // AlreadyExists (naming both places) when `name` is already registered for the same context
  // type. The conflict is also remembered: looking the name up later fails with that message
  // rather than silently using either registration.
  Status add(ApiRegistration registration);

  // The registration for `name` that serves `type`: the one written for the most derived type
  // in `type`'s chain. NotFound (with the closest registered names) when there is none.
  StatusOr<const ApiRegistration*> find(std::string_view name, const ContextType* type) const;
  StatusOr<ral_fn> findFunction(std::string_view name, const ContextType* type) const;

  // Up to `limit` registered names closest to `name` (edit distance), best first.
  std::vector<std::string> closestNames(std::string_view name, size_t limit = 3) const;
  std::vector<std::string> names() const;
  size_t size() const;

  // OK, or one error describing every conflicting registration seen so far.
  Status health() const;

 private:
  mutable std::shared_mutex mutex_;
  // name -> registrations for different context types
  std::unordered_map<std::string, std::vector<ApiRegistration>> entries_;
  std::unordered_map<std::string, std::string> conflicts_;  // name -> message
};

// Fills every `imports[i].fn` from `registry` for execution contexts of `type`, or changes
// nothing and returns one NotFound status listing every missing name (with suggestions).
Status resolveImports(const Registry& registry, const ContextType* type, ral_import* imports,
                      size_t count);

// Levenshtein distance, exposed for tests and tools.
size_t editDistance(std::string_view a, std::string_view b);

}  // namespace ral

#endif  // RAL_REGISTRY_H_
