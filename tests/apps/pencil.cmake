# A x = lambda B x and constraints end to end (included by CMakeLists.txt, which defines expect, mpirun,
# eigs, bad and plot_python): block-eigs writes a result file, check_pencil.py checks it against closed
# forms with the matrices built in numpy (eigenvalues to 1e-8 relative, X^T B X = I to 1e-10, residuals
# recomputed, the constant vector never among the results). Each case is one test (run_and_check.sh).
set(pencil_dir ${CMAKE_CURRENT_BINARY_DIR}/pencil)
file(MAKE_DIRECTORY ${pencil_dir})
set(check_pencil ${CMAKE_CURRENT_SOURCE_DIR}/check_pencil.py)
set(run_and_check ${CMAKE_CURRENT_SOURCE_DIR}/run_and_check.sh)
set(pencil_tolerance 1.0e-10)

# pencil_case(NAME NP CONFIG "SETS" "CHECK ARGS"): block-eigs CONFIG with the --set list SETS writing
# NAME.h5 at NP ranks, then check_pencil.py on it with CHECK ARGS.
function(pencil_case name np config sets check)
  set(out ${pencil_dir}/${name}.h5)
  set(set_args)
  foreach(s IN LISTS sets)
    list(APPEND set_args --set ${s})
  endforeach()
  add_test(NAME app.pencil_${name}_np${np}
           COMMAND ${expect} 0 "^pencil ok$" 1 -- ${run_and_check} ${out} --
                   ${mpirun} ${np} ${eigs} ${config} ${set_args} --set output.path=${out} --
                   ${plot_python} ${check_pencil} ${out} ${check} --tolerance ${pencil_tolerance})
  set_tests_properties(app.pencil_${name}_np${np} PROPERTIES LABELS "unit;mpi" PROCESSORS ${np} TIMEOUT 180
                       ENVIRONMENT "${BLOCKEIGS_MPI_ENV}")
endfunction()

# fem_p1's pencils: 1D 60, 2D 12 x 10, 3D 6 x 5 x 4 (no repeated eigenvalues), both ends, k = 1, 6, 20,
# at 1 to 4 ranks in turn.
set(np 1)
foreach(dims 1 2 3)
  if(dims EQUAL 1)
    set(grid "nx: 60")
    set(sizes 60)
  elseif(dims EQUAL 2)
    set(grid "nx: 12, ny: 10")
    set(sizes 12 10)
  else()
    set(grid "nx: 6, ny: 5, nz: 4")
    set(sizes 6 5 4)
  endif()
  set(config ${pencil_dir}/fem${dims}d.yaml)
  file(WRITE ${config}
       "matrix:\n  generator: {type: fem_p1_${dims}d, ${grid}, part: stiffness}\n"
       "matrix_b:\n  generator: {type: fem_p1_${dims}d, ${grid}, part: mass}\n"
       "eigensolver: {tolerance: ${pencil_tolerance}, max_iterations: 5000}\noutput: {monitor: false}\n")
  foreach(which smallest largest)
    foreach(k 1 6 20)
      pencil_case(fem${dims}d_${which}_k${k} ${np} ${config} "eigensolver.k=${k};eigensolver.which=${which}"
                  "fem_p1;${dims};${sizes};--which;${which};--k;${k}")
      math(EXPR np "${np} % 4 + 1")
    endforeach()
  endforeach()
endforeach()

# The rows renumbered by a graph partition: B moves with A, the eigenvectors come back in the input's order.
if(BLOCKEIGS_WITH_PTSCOTCH)
  pencil_case(fem2d_graph_partition 3 ${pencil_dir}/fem2d.yaml "eigensolver.k=6;execution.partition=graph"
              "fem_p1;2;12;10;--which;smallest;--k;6")
endif()

# Graph Laplacians with constraints: constant: the smallest nonzero eigenvalues (a cycle's in pairs).
file(WRITE ${pencil_dir}/path.yaml
     "matrix:\n  generator: {type: graph_laplacian, graph: path, n: 50}\n"
     "eigensolver: {k: 4, constraints: constant, tolerance: ${pencil_tolerance}, max_iterations: 5000}\n"
     "output: {monitor: false}\n")
file(WRITE ${pencil_dir}/cycle.yaml
     "matrix:\n  generator: {type: graph_laplacian, graph: cycle, n: 40}\n"
     "eigensolver: {k: 5, constraints: constant, tolerance: ${pencil_tolerance}, max_iterations: 5000}\n"
     "output: {monitor: false}\n")
pencil_case(path_constant 2 ${pencil_dir}/path.yaml "" "graph;path;50;--k;4")
pencil_case(path_constant 4 ${pencil_dir}/path.yaml "" "graph;path;50;--k;4")
pencil_case(cycle_constant 1 ${pencil_dir}/cycle.yaml "" "graph;cycle;40;--k;5")
pencil_case(cycle_constant 3 ${pencil_dir}/cycle.yaml "" "graph;cycle;40;--k;5")
if(BLOCKEIGS_WITH_PTSCOTCH)
  pencil_case(cycle_constant_graph_partition 4 ${pencil_dir}/cycle.yaml "execution.partition=graph"
              "graph;cycle;40;--k;5")
endif()

# Constraints from a file (deflation): the 4 smallest pairs of the 2D pencil, then the next 4 with those
# as constraints, B-orthogonal to them.
pencil_case(fem2d_first4 2 ${pencil_dir}/fem2d.yaml "eigensolver.k=4" "fem_p1;2;12;10;--which;smallest;--k;4")
set_tests_properties(app.pencil_fem2d_first4_np2 PROPERTIES FIXTURES_SETUP pencil_first4)
pencil_case(fem2d_next4 3 ${pencil_dir}/fem2d.yaml
            "eigensolver.k=4;eigensolver.constraints={file: ${pencil_dir}/fem2d_first4.h5, dataset: /eigenvectors}"
            "fem_p1;2;12;10;--which;smallest;--k;4;--skip;4;--constraints;${pencil_dir}/fem2d_first4.h5:/eigenvectors")
set_tests_properties(app.pencil_fem2d_next4_np3 PROPERTIES FIXTURES_REQUIRED pencil_first4)

# Complex Hermitian pencils (issue 83): the twisted (Bloch) Laplacian A with B another twisted Laplacian
# (complex, positive definite: no phase a multiple of 2 pi) or its grid's P1 mass matrix (real, held as
# complex), both ends, with Jacobi, and the next pairs with a first run's complex eigenvectors as constraints.
set(twisted_grid "type: laplacian_3d, nx: 8, ny: 6, nz: 5, boundary: periodic")
set(twisted_check "twisted;8;6;5;--phase;0.3;0.5;0.7")
file(WRITE ${pencil_dir}/twisted.yaml
     "matrix:\n  generator: {${twisted_grid}, phase: [0.3, 0.5, 0.7]}\n"
     "matrix_b:\n  generator: {${twisted_grid}, phase: [1.1, -0.9, 1.7]}\n"
     "eigensolver: {tolerance: ${pencil_tolerance}, max_iterations: 5000}\noutput: {monitor: false}\n")
file(WRITE ${pencil_dir}/twisted_mass.yaml
     "matrix:\n  generator: {${twisted_grid}, phase: [0.3, 0.5, 0.7]}\n"
     "matrix_b:\n  generator: {type: fem_p1_3d, nx: 8, ny: 6, nz: 5, part: mass}\n"
     "eigensolver: {tolerance: ${pencil_tolerance}, max_iterations: 5000}\noutput: {monitor: false}\n")
pencil_case(twisted_first5 2 ${pencil_dir}/twisted.yaml "eigensolver.k=5"
            "${twisted_check};--b-phase;1.1;-0.9;1.7;--k;5")
set_tests_properties(app.pencil_twisted_first5_np2 PROPERTIES FIXTURES_SETUP pencil_twisted_first5)
pencil_case(twisted_largest 3 ${pencil_dir}/twisted.yaml "eigensolver.k=4;eigensolver.which=largest;eigensolver.preconditioner=jacobi"
            "${twisted_check};--b-phase;1.1;-0.9;1.7;--which;largest;--k;4")
pencil_case(twisted_fem_mass 4 ${pencil_dir}/twisted_mass.yaml "eigensolver.k=6"
            "${twisted_check};--b-fem-mass;--k;6")
pencil_case(twisted_next4 1 ${pencil_dir}/twisted.yaml
            "eigensolver.k=4;eigensolver.constraints={file: ${pencil_dir}/twisted_first5.h5, dataset: /eigenvectors}"
            "${twisted_check};--b-phase;1.1;-0.9;1.7;--k;4;--skip;5;--constraints;${pencil_dir}/twisted_first5.h5:/eigenvectors")
set_tests_properties(app.pencil_twisted_next4_np1 PROPERTIES FIXTURES_REQUIRED pencil_twisted_first5)

# The summary and monitor name the problem; bad B refused once, exit 1 (every case: tests/mpi/test_pencil_inputs.cpp).
app_test(pencil_summary_np2 2 0 "^problem +A x = λ B x, B: 2D fem_p1 mass 12x10 .* eigenvectors B-orthonormal$" 1
         ${eigs} ${pencil_dir}/fem2d.yaml --set eigensolver.k=2)
app_test(pencil_monitor_np2 2 0 "^monitor +A x = λ B x: .*residual \\|\\|A x - λ B x\\|\\|, the time so far" 1
         ${eigs} ${pencil_dir}/fem2d.yaml --set eigensolver.k=2 --set output.monitor=true)
app_test(pencil_b_size_np2 2 1 "error: matrix_b: 2D fem_p1 mass 12x9 .* is 108 x 108, but the matrix \\(A\\) is 120 x 120" 1
         ${eigs} ${pencil_dir}/fem2d.yaml --set "matrix_b.generator={type: fem_p1_2d, nx: 12, ny: 9, part: mass}")
app_test(pencil_b_not_symmetric_np3 3 1 "error: matrix_b: .*unsymmetric\\.mtx: the matrix is not symmetric: B\\(0, 2\\) = 1 but B\\(2, 0\\) = 0" 1
         ${eigs} ${bad}/unsymmetric.yaml --set "matrix={generator: {type: laplacian_1d, nx: 4}}"
         --set "matrix_b={matrix_market: {file: unsymmetric.mtx}}")
app_test(pencil_b_zero_diagonal_np2 2 1 "error: matrix_b: .*zero_diagonal\\.mtx: B\\(1, 1\\) = 0 \\(not stored\\) \\(zero-based\\)" 1
         ${eigs} ${bad}/unsymmetric.yaml --set "matrix={generator: {type: laplacian_1d, nx: 4}}"
         --set "matrix_b={matrix_market: {file: zero_diagonal.mtx}}")
# A positive diagonal passes the reader's check; LOBPCG then meets x^T B x < 0 and refuses B (no result file).
app_test(pencil_b_indefinite_np2 2 1 "error: matrix_b: .*indefinite_b\\.mtx: B is not positive definite: LOBPCG met a vector x with x\\^T B x = -" 1
         ${eigs} ${bad}/unsymmetric.yaml --set "matrix={generator: {type: laplacian_1d, nx: 40}}"
         --set "matrix_b={matrix_market: {file: indefinite_b.mtx}}" --set eigensolver.k=3
         --set eigensolver.preconditioner=none)
app_test(pencil_cg_refuses_matrix_b_np2 2 1 "unknown key matrix_b \\(matrix_b \\(B of A x = lambda B x\\) is read by block-eigs" 1
         $<TARGET_FILE:block-cg> ${PROJECT_SOURCE_DIR}/configs/block-cg-demo.yaml
         --set "matrix_b={generator: {type: laplacian_1d, nx: 4}}")
