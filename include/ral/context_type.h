// ContextType identifies a family of execution contexts (the standalone base, torch, ...).
// A RAL function registered for a context type also serves every type derived from it; a host
// overrides a name by registering it for its own type, which is then preferred.
#ifndef RAL_CONTEXT_TYPE_H_
#define RAL_CONTEXT_TYPE_H_

namespace ral {

struct ContextType {
  const char* name;
  const ContextType* parent;  // nullptr for the base type

  bool isA(const ContextType* other) const {
    for (const ContextType* t = this; t; t = t->parent)
      if (t == other) return true;
    return false;
  }
};

}  // namespace ral

#endif  // RAL_CONTEXT_TYPE_H_
