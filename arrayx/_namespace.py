"""Every function of the namespace, gathered from the modules of each group of the standard.

`arrayx/__init__.py` re-exports this; the array object reaches its operators through it.
"""

from ._creation_functions import *  # noqa: F401,F403
from ._data_type_functions import *  # noqa: F401,F403
from ._elementwise_functions import *  # noqa: F401,F403
from ._indexing_functions import *  # noqa: F401,F403
from ._linear_algebra_functions import *  # noqa: F401,F403
from ._manipulation_functions import *  # noqa: F401,F403
from ._nan_functions import *  # noqa: F401,F403
from ._row_functions import *  # noqa: F401,F403
from ._searching_functions import *  # noqa: F401,F403
from ._set_functions import *  # noqa: F401,F403
from ._sorting_functions import *  # noqa: F401,F403
from ._statistical_functions import *  # noqa: F401,F403
from ._utility_functions import *  # noqa: F401,F403
from ._transfer import _to_device  # noqa: F401
