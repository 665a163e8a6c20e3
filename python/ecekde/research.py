"""ecekde.research: the research helpers behind docs/validation.md, kept apart from the estimators' API:
unbiased U-statistics (``unbiased_square_of_mean``, ``unbiased_product_of_means``, ``unbiased_cube_of_mean``,
``unbiased_fourth_power_of_mean``, ``unbiased_covariance``, ``unbiased_third_comoment``), the ratio
estimators with the paper's and the complete bias corrections (``ratio_of_means``,
``ratio_of_squared_means``) and one summand of the paper's Eq. 7 (``sharpness_at``)."""
from ._ecekde import research as _research

globals().update({name: getattr(_research, name) for name in dir(_research) if not name.startswith("_")})
__all__ = [name for name in dir(_research) if not name.startswith("_")]
