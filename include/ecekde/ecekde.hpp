// Everything ecekde offers, in one include.
#pragma once

#include "ecekde/binned.hpp"
#include "ecekde/data.hpp"
#include "ecekde/error.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/gradient.hpp"
#include "ecekde/io.hpp"
#include "ecekde/kernel_regression.hpp"
#include "ecekde/mmce.hpp"
#include "ecekde/names.hpp"
#include "ecekde/options.hpp"
#include "ecekde/random.hpp"
#include "ecekde/synthetic.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/communicator.hpp"
#include "ecekde/temperature.hpp"
