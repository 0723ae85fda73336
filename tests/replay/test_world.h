// The MPI world of a replay test binary: MPI can be initialised only once per
// process, so every test of the binary shares this one (a singleton rank
// unless the binary itself runs under mpirun).
#ifndef TESTS_REPLAY_TEST_WORLD_H_
#define TESTS_REPLAY_TEST_WORLD_H_

#include "replay/mpi_world.h"

namespace et::replay::testing {

// nullptr when MPI cannot start.
inline MpiWorld* World() {
  static MpiWorld* world = [] {
    auto w = MpiWorld::Init(nullptr, nullptr);
    return w.ok() ? w->release() : nullptr;
  }();
  return world;
}

}  // namespace et::replay::testing

#endif  // TESTS_REPLAY_TEST_WORLD_H_
