// Host emulation, part 2 (after the kernel source): the launcher. See emulate.hpp.
//
// `mk_emu_launch(name, grid_x, grid_y, args)` runs kernel `name` over the grid, `args[i]`
// pointing at argument i as cuLaunchKernel takes them. Returns 0, or -1 for an unknown name.

template <class Body>
static void mk_emu_run(unsigned grid_x, unsigned grid_y, Body body) {
    std::barrier<> barrier(MK_THREADS);
    mk_emu_barrier = &barrier;
    std::vector<std::thread> threads;
    threads.reserve(MK_THREADS);
    for (unsigned t = 0; t < MK_THREADS; ++t) {
        threads.emplace_back([&, t] {
            threadIdx = dim3{t, 0, 0};
            for (unsigned y = 0; y < grid_y; ++y) {
                for (unsigned x = 0; x < grid_x; ++x) {
                    blockIdx = dim3{x, y, 0};
                    body();
                    // Every thread leaves the block before shared memory is reused.
                    barrier.arrive_and_wait();
                }
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    mk_emu_barrier = nullptr;
}

#define MK_ARG(type, i) (*static_cast<type*>(args[i]))

extern "C" int mk_emu_launch(const char* name, unsigned grid_x, unsigned grid_y, void** args) {
    if (std::strcmp(name, "manaka_accumulate") == 0) {
        mk_emu_run(grid_x, grid_y, [&] {
            manaka_accumulate(MK_ARG(const unsigned*, 0), MK_ARG(const float*, 1),
                              MK_ARG(const float*, 2), MK_ARG(const float*, 3),
                              MK_ARG(const float*, 4), MK_ARG(const float*, 5),
                              MK_ARG(const float*, 6), MK_ARG(float*, 7), MK_ARG(float*, 8),
                              MK_ARG(int, 9));
        });
        return 0;
    }
    if (std::strcmp(name, "manaka_hidden1") == 0) {
        mk_emu_run(grid_x, grid_y, [&] {
            manaka_hidden1(MK_ARG(const float*, 0), MK_ARG(const float*, 1),
                           MK_ARG(const float*, 2), MK_ARG(float*, 3), MK_ARG(int, 4));
        });
        return 0;
    }
#if MK_H2 > 0
    if (std::strcmp(name, "manaka_hidden2") == 0) {
        mk_emu_run(grid_x, grid_y, [&] {
            manaka_hidden2(MK_ARG(const float*, 0), MK_ARG(const float*, 1),
                           MK_ARG(const float*, 2), MK_ARG(float*, 3), MK_ARG(int, 4));
        });
        return 0;
    }
#endif
    if (std::strcmp(name, "manaka_outputs") == 0) {
        mk_emu_run(grid_x, grid_y, [&] {
            manaka_outputs(MK_ARG(const unsigned*, 0), MK_ARG(const float*, 1),
                           MK_ARG(const float*, 2), MK_ARG(const float*, 3),
                           MK_ARG(const float*, 4), MK_ARG(const float*, 5),
                           MK_ARG(const float*, 6), MK_ARG(const float*, 7),
                           MK_ARG(const float*, 8), MK_ARG(float*, 9), MK_ARG(int, 10));
        });
        return 0;
    }
    return -1;
}
