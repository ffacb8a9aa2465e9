#include "ral/registry.h"

#include <algorithm>
#include <utility>

#include "ral/registration.h"
#include "ral/trace.h"

namespace ral {

Registry& Registry::global() {
  static Registry* registry = new Registry();  // never destroyed: registrations outlive exit
  return *registry;
}

Status Registry::add(ApiRegistration reg) {
  if (reg.name.empty() || reg.fn == nullptr || reg.context_type == nullptr)
    return invalidArgument("incomplete RAL function registration at ", reg.location);
  std::unique_lock<std::shared_mutex> lock(mutex_);
  auto& list = entries_[reg.name];
  for (const ApiRegistration& existing : list) {
    if (existing.context_type == reg.context_type) {
      std::string message = internal::strCat("RAL function '", reg.name, "' for context type '",
                                             reg.context_type->name, "' is registered twice: at ",
                                             existing.location, " and at ", reg.location);
      conflicts_[reg.name] = message;
      return Status(StatusCode::kAlreadyExists, std::move(message));
    }
  }
  list.push_back(std::move(reg));
  return Status();
}

StatusOr<const ApiRegistration*> Registry::find(std::string_view name,
                                                const ContextType* type) const {
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    const std::string key(name);
    if (auto c = conflicts_.find(key); c != conflicts_.end())
      return Status(StatusCode::kAlreadyExists, c->second);
    if (auto it = entries_.find(key); it != entries_.end()) {
      for (const ContextType* t = type; t; t = t->parent)
        for (const ApiRegistration& reg : it->second)
          if (reg.context_type == t) return &reg;
      std::string types;
      for (const ApiRegistration& reg : it->second)
        types += internal::strCat(types.empty() ? "" : ", ", reg.context_type->name);
      return notFound("RAL function '", name, "' is registered only for context type(s) ", types,
                      ", not for '", type ? type->name : "(null)", "'");
    }
  }
  std::string message = internal::strCat("no RAL function named '", name, "'");
  const auto close = closestNames(name);
  if (!close.empty()) {
    message += "; closest registered:";
    for (const auto& c : close) message += " " + c;
  }
  return Status(StatusCode::kNotFound, std::move(message));
}

StatusOr<ral_fn> Registry::findFunction(std::string_view name, const ContextType* type) const {
  RAL_ASSIGN_OR_RETURN(const ApiRegistration* reg, find(name, type));
  return reg->fn;
}

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> Registry::closestNames(std::string_view name, size_t limit) const {
  std::vector<std::pair<size_t, std::string>> scored;
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    scored.reserve(entries_.size());
    for (const auto& [candidate, regs] : entries_)
      scored.emplace_back(editDistance(name, candidate), candidate);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < limit; ++i) out.push_back(scored[i].second);
  return out;
}

std::vector<std::string> Registry::names() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [name, regs] : entries_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

size_t Registry::size() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  return entries_.size();
}

Status Registry::health() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  if (conflicts_.empty()) return Status();
  std::vector<std::string> messages;
  for (const auto& [name, message] : conflicts_) messages.push_back(message);
  std::sort(messages.begin(), messages.end());
  std::string all;
  for (const auto& m : messages) all += (all.empty() ? "" : "; ") + m;
  return Status(StatusCode::kAlreadyExists, std::move(all));
}

Status resolveImports(const Registry& registry, const ContextType* type, ral_import* imports,
                      size_t count) {
  if (count > 0 && imports == nullptr) return invalidArgument("import table is null");
  std::vector<ral_fn> resolved(count, nullptr);
  std::vector<std::string> failures;
  for (size_t i = 0; i < count; ++i) {
    if (imports[i].name == nullptr) {
      failures.push_back(internal::strCat("import #", i, " has no name"));
      continue;
    }
    auto fn = registry.findFunction(imports[i].name, type);
    if (fn.ok()) {
      resolved[i] = *fn;
    } else {
      failures.push_back(std::string(fn.status().message()));
    }
  }
  if (!failures.empty()) {
    std::string message =
        internal::strCat(failures.size(), " of ", count, " imports could not be resolved:");
    for (const auto& f : failures) message += "\n  - " + f;
    return Status(StatusCode::kNotFound, std::move(message));
  }
  // While a trace records, each import is a wrapper that records its calls (ral/trace.h).
  for (size_t i = 0; i < count; ++i) imports[i].fn = trace::traced(imports[i].name, resolved[i]);
  return Status();
}

namespace internal {
Status registrationHealth() { return Registry::global().health(); }
}  // namespace internal

}  // namespace ral
