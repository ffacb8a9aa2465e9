#include "ral/manifest_checksum.h"

#include <string>
#include <string_view>

#include "module_generated.h"
#include "ral/module_spec.h"

namespace ral::internal {

namespace {

// A byte string with every field tagged and length-prefixed, so that moving bytes between
// adjacent fields (or an absent field versus an empty one) changes it.
class Encoder {
 public:
  void u64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const flatbuffers::String* s) {
    present(s != nullptr);
    if (s) bytes(s->data(), s->size());
  }
  template <typename T>
  void vec(const flatbuffers::Vector<T>* v) {
    present(v != nullptr);
    // Raw bytes: no element reads, so a misaligned vector is encoded, not dereferenced.
    if (v) bytes(v->Data(), v->size() * sizeof(T));
  }
  void present(bool p) { out_.push_back(p ? '\1' : '\0'); }
  uint64_t digest() const {
    const uint64_t h = moduleChecksum(out_.data(), out_.size());
    return h == 0 ? 1 : h;
  }

 private:
  void bytes(const void* p, size_t n) {
    u64(n);
    out_.append(static_cast<const char*>(p), n);
  }
  std::string out_;
};

void encodeSignatures(Encoder& e,
                      const flatbuffers::Vector<flatbuffers::Offset<fb::TensorSignature>>* v) {
  e.present(v != nullptr);
  if (v == nullptr) return;
  e.u64(v->size());
  for (const fb::TensorSignature* s : *v) {
    e.present(s != nullptr);
    if (s == nullptr) continue;
    e.str(s->name());
    e.u64(static_cast<uint64_t>(s->dtype()));
    e.vec(s->dims());
    e.u64(static_cast<uint64_t>(s->device()));
    e.vec(s->strides());
  }
}

}  // namespace

uint64_t manifestChecksum(const fb::Module& m) {
  Encoder e;
  e.u64(m.abi_version());
  e.str(m.name());
  e.str(m.entry());
  encodeSignatures(e, m.inputs());
  encodeSignatures(e, m.outputs());
  e.present(m.host_library() != nullptr);
  e.u64(m.host_library() ? m.host_library()->size() : 0);
  e.u64(m.host_library_checksum());
  e.present(m.executables() != nullptr);
  if (m.executables()) {
    e.u64(m.executables()->size());
    for (const fb::Executable* x : *m.executables()) {
      e.present(x != nullptr);
      if (x == nullptr) continue;
      e.str(x->name());
      e.u64(static_cast<uint64_t>(x->format()));
      e.present(x->data() != nullptr);
      e.u64(x->data() ? x->data()->size() : 0);
      e.present(x->entries() != nullptr);
      if (x->entries()) {
        e.u64(x->entries()->size());
        for (const fb::ExecutableEntry* entry : *x->entries()) {
          e.present(entry != nullptr);
          if (entry == nullptr) continue;
          e.str(entry->name());
          const fb::WorkgroupSize* wg = entry->workgroup_size();
          e.present(wg != nullptr);
          if (wg) {
            e.u64(wg->x());
            e.u64(wg->y());
            e.u64(wg->z());
          }
        }
      }
      e.u64(x->checksum());
      // Only when present, so files from before variants keep their checksum.
      if (x->variants()) {
        e.u64(0x56415249414e5453);  // "VARIANTS": the field's tag
        e.u64(x->variants()->size());
        for (const fb::ExecutableVariant* v : *x->variants()) {
          e.present(v != nullptr);
          if (v == nullptr) continue;
          e.str(v->target());
          e.present(v->data() != nullptr);
          e.u64(v->data() ? v->data()->size() : 0);
          e.u64(v->checksum());
        }
      }
    }
  }
  e.present(m.constants() != nullptr);
  if (m.constants()) {
    e.u64(m.constants()->size());
    for (const fb::Constant* c : *m.constants()) {
      e.present(c != nullptr);
      if (c == nullptr) continue;
      e.str(c->name());
      e.u64(static_cast<uint64_t>(c->dtype()));
      e.vec(c->shape());
      e.present(c->data() != nullptr);
      e.u64(c->data() ? c->data()->size() : 0);
      e.u64(c->checksum());
    }
  }
  e.present(m.imports() != nullptr);
  if (m.imports()) {
    e.u64(m.imports()->size());
    for (const flatbuffers::String* s : *m.imports()) e.str(s);
  }
  // Only when present, so files from before host variants keep their checksum.
  if (m.host_variants()) {
    e.u64(0x484f535456415253);  // "HOSTVARS": the field's tag
    e.u64(m.host_variants()->size());
    for (const fb::HostVariant* v : *m.host_variants()) {
      e.present(v != nullptr);
      if (v == nullptr) continue;
      e.str(v->target());
      e.present(v->data() != nullptr);
      e.u64(v->data() ? v->data()->size() : 0);
      e.u64(v->checksum());
    }
  }
  return e.digest();
}

Status resealManifest(uint8_t* data, size_t size) {
  flatbuffers::Verifier verifier(data, size, /*max_depth=*/32, /*max_tables=*/100000);
  if (!fb::VerifySizePrefixedModuleBuffer(verifier))
    return invalidArgument("cannot reseal a module buffer that does not verify");
  fb::Module* m = fb::GetMutableSizePrefixedModule(data);
  if (!m->mutate_manifest_checksum(manifestChecksum(*m)))
    return invalidArgument("the module buffer has no manifest_checksum field to reseal");
  return Status();
}

}  // namespace ral::internal
