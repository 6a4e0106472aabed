set -x
A=${A:-90}
G="-gencode arch=compute_$A,code=sm_$A"
nvcc --version | tail -2
nvcc -cubin $G -Xptxas -v whole.cu -o whole.cubin
nvcc -cubin $G -Xptxas -v own.cu -o own.cubin
nvcc -c -rdc=true $G -Xptxas -v own.cu -o own.o && nvcc -dlink $G -Xnvlink -v own.o -o ownl.o --keep --keep-dir ko -dryrun >/dev/null 2>&1; mkdir -p ko kl; nvcc -dlink $G -Xnvlink -v own.o -o ownl.o --keep --keep-dir ko
nvcc -c -rdc=true $G c.cu -o c.o; nvcc -c -rdc=true $G -Xptxas -v d.cu -o d.o; nvcc -dlink $G -Xnvlink -v c.o d.o -o l.o --keep --keep-dir kl
ls ko kl
python3 attrs.py whole.cubin own.cubin ko/ownl.cubin kl/l.cubin
