// header_cxx.cpp - pk_runtime.h must compile as C++17 (-Wall -Werror) and
// its functions must link from C++ (extern "C").  Runs a tiny launch.
#include "pk_runtime.h"

#include <atomic>
#include <cstdio>
#include <cstring>

namespace {

struct Args {
	std::atomic<int> hits[6];
};

void program(void *args, const int32_t *pid, const int32_t *nprog)
{
	static_cast<Args *>(args)->hits[pid[0] * nprog[1] + pid[1]]++;
}

} // namespace

int main()
{
	Args args{};
	const int64_t grid[2] = {2, 3};
	const uint8_t parallel[2] = {1, 0};
	const pk_host_launch l = {"cxx", program, &args, 2, grid, parallel};
	int failed = pk_launch_host(nullptr, &l) != PK_SUCCESS;
	for (auto &h : args.hits)
		failed |= h.load() != 1;
	failed |= std::strcmp(pk_status_name(PK_ERR_DRIVER), "PK_ERR_DRIVER") != 0;
	failed |= pk_set_error(PK_ERR_INVALID_VALUE, "%d", 42) != PK_ERR_INVALID_VALUE;
	failed |= std::strcmp(pk_last_error(), "42") != 0;
	std::printf("header_cxx: %s\n", failed ? "FAILED" : "ok");
	return failed;
}
