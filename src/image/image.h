// Float RGBA images on the CPU: gpufft::Image is public (gpufft/gpufft.h).
#pragma once

#include <gpufft/gpufft.h>
