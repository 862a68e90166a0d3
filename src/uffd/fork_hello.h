// SPDX-License-Identifier: Apache-2.0
// What a forked child tells its parent's fault handler, and what it is
// told back (uffd/forked_children.h reads it, uffd/child_attach.h sends it).
// One SEQPACKET message on the socket the child inherited, with the child's
// userfaultfd and one end of a reply socket attached (SCM_RIGHTS); the
// reply is one byte on that socket. A child that could not make its
// userfaultfd sends the message with no descriptors, so that the parent
// stops counting it as a fork in flight.
#pragma once
#include <cstdint>

namespace mtier {

inline constexpr uint32_t kForkHelloMagic = 0x6b726f66;  // "fork"
inline constexpr uint32_t kForkHelloVersion = 1;

struct ForkHello {
  uint32_t magic = kForkHelloMagic;
  uint32_t version = kForkHelloVersion;
  int32_t pid = 0;              // the child's process id
  int32_t inherited_below = 0;  // tables with smaller ids existed at the fork
};

// The reply byte.
inline constexpr uint8_t kForkTaken = 1, kForkRefused = 0;

// What a child needs from its parent's engine to read the parent's tables;
// captured in the parent just before the fork (Engine::prepare_fork), read
// in the child from its copy of the parent's memory.
struct Inheritance {
  char* base = nullptr;     // the region, at the same address in the child
  uint64_t bytes = 0;
  int memfd = -1;           // the region's memfd (inherited descriptor)
  int socket = -1;          // where the child announces itself
  int32_t inherited_below = 0;
};

}  // namespace mtier
